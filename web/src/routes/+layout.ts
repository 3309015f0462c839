// Every page is prerendered into an HTML shell at build time (header, navigation, the page's
// layout), so a slow device paints the app before its JavaScript runs; the app then hydrates
// and renders the rest in the browser. Unknown paths get the SPA fallback (200.html).
export const prerender = true;
export const ssr = true;
