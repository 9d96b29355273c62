// The pages' one script (loaded with the CSP nonce); without it every page still works.
// - Copy buttons of the badge snippets: without the script they stay hidden and the snippets
//   remain selectable text.
// - The directory's filters: folded on a phone, unfolded where the screen is wide enough to
//   show them beside the results (the page's own search keeps them unfolded in any case).
"use strict";
(function () {
  var status = document.querySelector(".copy-status");
  function tell(text) { if (status) { status.textContent = text; } }
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = field.value;
      var done = function () { tell(button.textContent.replace(/^Copy /, "") + " snippet copied."); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () {
          field.select();
          tell("Copying was refused; the snippet is selected, copy it with your keyboard.");
        });
      } else {
        field.select();
        tell("The snippet is selected; copy it with your keyboard.");
      }
    });
  });
  var wide = window.matchMedia && window.matchMedia("(min-width: 36.01rem)").matches;
  document.querySelectorAll("details[data-unfold-wide]").forEach(function (details) {
    if (wide) { details.open = true; }
  });
})();
