// Panels below the fold fetch their data only when they come near the screen, so the first
// paint asks the server for /api/options and /api/compare only.

/** Call `callback` once, the first time `node` comes within `margin` of the viewport. */
export function whenVisible(node, callback, margin = "300px 0px") {
  if (!("IntersectionObserver" in window)) {
    callback();
    return;
  }
  const observer = new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting)) {
      observer.disconnect();
      callback();
    }
  }, { rootMargin: margin });
  observer.observe(node);
}
