// Tiny DOM helpers. Text always goes in through textContent, never innerHTML, so whatever a
// student types (or the server echoes back) stays text.

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

/** el("li", {className: "x", dataset: {head: "0"}, text: "..."}, [children]) */
export function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "attrs") for (const [name, v] of Object.entries(value)) node.setAttribute(name, v);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function show(node, visible) {
  node.hidden = !visible;
}
