// Copy buttons: shown only where the clipboard can be written; the text stays selectable without them.
document.addEventListener("DOMContentLoaded", () => {
  if (!navigator.clipboard) return;
  for (const button of document.querySelectorAll("button.copy[data-copy]")) {
    button.hidden = false;
    const label = button.textContent;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(button.dataset.copy);
        button.textContent = "Copied";
      } catch {
        button.textContent = "Copy failed";
      }
      setTimeout(() => { button.textContent = label; }, 2000);
    });
  }
});

// The link list's "tick every link on this page" box: shown only where scripts run (without
// them every box is still ticked one by one).
document.addEventListener("DOMContentLoaded", () => {
  const wrap = document.querySelector(".select-all");
  if (!wrap) return;
  const all = wrap.querySelector("input");
  const boxes = () => document.querySelectorAll("input[name=ids]");
  wrap.hidden = false;
  all.addEventListener("change", () => {
    for (const box of boxes()) box.checked = all.checked;
  });
});
