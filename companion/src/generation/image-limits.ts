/** How large an image in a chat request may be (documented in docs/vision.md). */

/** Bytes of one image as it arrives (a data URL's, a base64 field's or a fetched body). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** Pixels of one image: a larger one is refused before it is decoded (a decompression bomb). */
export const MAX_IMAGE_PIXELS = 40_000_000;
/** The longer side over the shorter: a 1×100,000 strip says nothing a projector could see. */
export const MAX_ASPECT_RATIO = 20;
