// Copy buttons of the badge snippets: the only script of the pages (loaded with the CSP nonce).
// Without it the buttons stay hidden and the snippets remain selectable text.
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
})();
