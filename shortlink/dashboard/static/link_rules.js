// The link-rules editor: each rule card shows only the inputs of the action chosen in its "Then"
// list. Without scripts every action's inputs show, and saving reads only the chosen action's.
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-choose-action]")) {
    const card = select.closest("fieldset");
    const show = () => {
      for (const part of card.querySelectorAll("[data-action]")) {
        part.hidden = part.dataset.action !== select.value;
      }
    };
    select.addEventListener("change", show);
    show();
  }
});
