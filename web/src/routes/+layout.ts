// A single-page app: the shell is prerendered and every page renders in the browser.
export const prerender = true;
export const ssr = false;
