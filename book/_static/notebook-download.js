// Each chapter's download menu gets its executed notebook: scripts/build_book.sh copies
// _build/jupyter_execute/notebooks/<name>.ipynb next to notebooks/<name>.html
// (bparallel.book.downloads), and this adds the ".ipynb" entry beside ".md" and ".pdf".
document.addEventListener("DOMContentLoaded", function () {
  var match = window.location.pathname.match(/\/notebooks\/([^\/]+)\.html$/);
  if (!match) return;
  var menu = document.querySelector(".dropdown-download-buttons ul");
  if (!menu) return;
  var item = document.createElement("li");
  var link = document.createElement("a");
  link.className = "btn btn-sm dropdown-item notebook-download";
  link.href = match[1] + ".ipynb";
  link.setAttribute("download", match[1] + ".ipynb");
  link.title = "Download this chapter as an executed Jupyter notebook";
  if (window.location.protocol === "file:") {
    // A page opened from a file cannot start a download (browsers ignore `download` for
    // file:// links and show the notebook's JSON): say how to save it instead.
    link.title += " (opened from a file: right-click and choose Save Link As)";
  }
  link.innerHTML = '<span class="btn__icon-container"><i class="fas fa-code"></i></span>' +
    '<span class="btn__text-container">.ipynb</span>';
  item.appendChild(link);
  menu.insertBefore(item, menu.firstChild);
});
