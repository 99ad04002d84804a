// Where the keyboard goes when the page changes under it: a screen or form
// that replaces the one a button was on would otherwise leave focus on
// <body>, and keyboard and screen-reader users would start again from the top.

/** Focuses the main heading (made focusable for the purpose). */
export function focusHeading(): void {
  const heading = document.querySelector<HTMLElement>('main h1');
  if (heading === null) return;
  heading.tabIndex = -1;
  heading.focus();
}

/** After the next render, focuses the element with this id, or the main heading when it is gone. */
export function focusSoon(id: string): void {
  requestAnimationFrame(function focusAfterRender() {
    const target = document.getElementById(id);
    if (target === null) return focusHeading();
    target.focus();
  });
}
