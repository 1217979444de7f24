// Every figure of a page opens full size on tap or click (issue #73, item 4): on a phone a
// text-width figure shrinks to the screen and its smallest text can fall below 8 px, so each
// figure's image becomes a link to the image file itself (SVG: the browser shows it at any
// zoom, offline and from file:// too). An image already inside a link is left as it is.
document.addEventListener("DOMContentLoaded", function () {
  var main = document.querySelector("main") || document.body;
  main.querySelectorAll(".cell_output img, figure img").forEach(function (img) {
    if (img.closest("a") || !img.getAttribute("src")) return;
    var link = document.createElement("a");
    link.className = "bp-zoom";
    link.href = img.getAttribute("src");
    link.title = "Open the figure full size";
    link.setAttribute("aria-label", "Open the figure full size" +
      (img.alt ? ": " + img.alt : ""));
    img.parentNode.insertBefore(link, img);
    link.appendChild(img);
  });
});
