// Tables marked `bp-cards` (the introduction's findings) read as one card per row on narrow
// screens (book/_static/bparallel.css): each cell gets its column's header as data-label,
// which the stylesheet shows before the cell. Nothing changes on wide screens.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("table.bp-cards").forEach(function (table) {
    var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
      return th.textContent.trim();
    });
    table.querySelectorAll("tbody tr").forEach(function (row) {
      Array.prototype.forEach.call(row.children, function (cell, k) {
        if (heads[k]) cell.setAttribute("data-label", heads[k]);
      });
    });
  });
});
