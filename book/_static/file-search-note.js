// On the search page of a book opened from file://, say why matches show no text preview and
// how to get them: the browser blocks the page fetches that Sphinx's search makes for its
// previews, so only page titles are listed. Over http (python -m http.server) all works.
// From file:// the previews are switched off before the search runs: each blocked fetch
// would log a console error (one per match).
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
document.addEventListener("DOMContentLoaded", function () {
  if (window.location.protocol !== "file:") return;
  if (!/\/search\.html$/.test(window.location.pathname)) return;
  var target = document.querySelector("#search-results") ||
    document.querySelector("article") || document.querySelector("main");
  if (!target) return;
  var note = document.createElement("div");
  note.className = "admonition note file-search-note";
  note.innerHTML =
    '<p class="admonition-title">Opened from a file</p>' +
    "<p>The search lists the pages that match, but a browser does not let a page opened " +
    "from a file read the other pages, so no text previews are shown. To get them, serve " +
    "the book folder and open it over http, e.g. <code>python -m http.server -d " +
    "_build/html</code> and then <code>http://localhost:8000/search.html</code>.</p>";
  target.parentNode.insertBefore(note, target);
});
