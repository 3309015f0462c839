/// <reference types="@sveltejs/kit" />
/// <reference types="vite-plugin-pwa/svelte" />

// Hearth declares no App.Locals, App.PageData or App.Error of its own yet.
export {};
