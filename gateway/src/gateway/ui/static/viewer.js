// Reach trace viewer: the pages work without this file; it only adds conveniences.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // List: a click anywhere on a row opens its trace.
  for (const row of document.querySelectorAll("table.traces tr[data-trace-id]")) {
    row.addEventListener("click", (event) => {
      if (event.target.closest("a")) return;
      window.location.assign("/ui/traces/" + encodeURIComponent(row.dataset.traceId));
    });
  }

  // Waterfall: hovering a span marks its ancestors, so the nesting is easy to follow.
  const spans = new Map();
  for (const el of document.querySelectorAll("details.span")) spans.set(el.dataset.spanId, el);
  const mark = (el, on) => {
    let parent = spans.get(el.dataset.parentId);
    while (parent) {
      parent.classList.toggle("ancestor", on);
      parent = spans.get(parent.dataset.parentId);
    }
  };
  for (const el of spans.values()) {
    const summary = el.querySelector("summary");
    summary.addEventListener("mouseenter", () => mark(el, true));
    summary.addEventListener("mouseleave", () => mark(el, false));
  }

  // Buttons to open or close every span's details at once.
  const bar = document.querySelector(".legend");
  if (bar && spans.size) {
    for (const [label, open] of [["expand all", true], ["collapse all", false]]) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = label;
      button.addEventListener("click", () => {
        for (const el of spans.values()) el.open = open;
      });
      bar.append(button);
    }
  }
});
