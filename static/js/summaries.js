// The summary page's "Copy" button: puts the list-ready report on the clipboard.
// A file of its own (the CSP allows scripts from this site only); no other page loads it.
document.querySelectorAll("[data-copy]").forEach(function (button) {
  button.addEventListener("click", function () {
    var source = document.getElementById(button.getAttribute("data-copy"));
    var done = function (text) { button.textContent = text; };
    if (!source) { return; }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.textContent).then(
        function () { done("Copied"); },
        function () { done("Copy failed: select the text"); }
      );
      return;
    }
    // Plain http on a lab network: select the text so Ctrl-C copies it.
    var range = document.createRange();
    range.selectNodeContents(source);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    done(document.execCommand && document.execCommand("copy") ? "Copied" : "Selected: press Ctrl-C");
  });
});
