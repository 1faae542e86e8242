// @ts-check
// Building DOM without markup strings: text always goes in as text. The one exception,
// `trustedHtml`, takes HTML that the Rust side rendered from markdown and sanitized.

export function el(tag, options = {}, children = []) {
  const element = document.createElement(tag);
  if (options.class) element.className = options.class;
  if (options.text != null) element.textContent = options.text;
  if (options.title) element.title = options.title;
  if (options.type) element.type = options.type;
  if (options.dataset) Object.assign(element.dataset, options.dataset);
  if (options.attrs) for (const [name, value] of Object.entries(options.attrs)) element.setAttribute(name, value);
  if (options.onClick) element.addEventListener("click", options.onClick);
  for (const child of children) if (child) element.append(child);
  return element;
}

// HTML produced by the Rust side's markdown renderer (pulldown-cmark + ammonia).
export function trustedHtml(element, sanitizedHtml) {
  element.innerHTML = sanitizedHtml;
  return element;
}

// A button; `spokenLabel` names it for a screen reader when its text is a symbol ("×").
export function button(label, onClick, className = "button", spokenLabel = null) {
  const element = el("button", { type: "button", class: className, text: label, onClick });
  if (spokenLabel) {
    element.setAttribute("aria-label", spokenLabel);
    element.title = spokenLabel;
  }
  return element;
}
