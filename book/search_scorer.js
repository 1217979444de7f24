// The search's ranking (Sphinx's `html_search_scorer`, inlined in language_data.js before
// searchtools.js reads it): Sphinx's own weights, and a chapter or prose page before any
// entry of the API reference (issue #73, item 5: 28 of the 44 results for "mixing" were API
// entries, chapter 02 ranked sixth). A reader searching a word of the paper wants the pages
// that explain it; the API entries follow, in their own order.
var Scorer = {
  score: function (result) {
    // result: [docname, title, anchor, descr, score, filename]
    var docname = result[0], score = result[4];
    return docname === "book/api" ? score - 1000 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
