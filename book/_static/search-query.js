// A page other than the search page ignores a `?q=` query. Sphinx's search script, loaded on
// every page for the search dialog, runs a `?q=` query when the page loads; on a page that is
// not the search page there is no results list for it and no index, and it logs an error. The
// query is dropped from the address before that happens (everything else of the address,
// its #fragment too, stays), and a search run on such a page is a no-op.
(function () {
  if (/\/search\.html$/.test(window.location.pathname)) return;
  var params = new URLSearchParams(window.location.search);
  if (!params.has("q")) return;
  params.delete("q");
  var rest = params.toString();
  try {
    history.replaceState(history.state, "",
      window.location.pathname + (rest ? "?" + rest : "") + window.location.hash);
  } catch (err) {
    // a browser that refuses to rewrite this address keeps it; the guard below still holds
  }
  function guard() {
    if (!window.Search || window.Search.__bpGuarded) return;
    var run = window.Search.performSearch;
    window.Search.performSearch = function (query) {
      if (!document.getElementById("search-results")) return;
      return run.call(window.Search, query);
    };
    window.Search.__bpGuarded = true;
  }
  guard();
  document.addEventListener("DOMContentLoaded", guard, { capture: true });
})();
