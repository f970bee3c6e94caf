// Apply the saved theme before first paint so the page never flashes the wrong colours.
// A file, not an inline script: the hub's Content-Security-Policy runs only its own files.
try {
  var t = localStorage.getItem("lineup.theme");
  if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
} catch (e) {}
