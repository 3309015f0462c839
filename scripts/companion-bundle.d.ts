/** The companion compiled ahead into build/companion (see companion-bundle.js). */
export declare const BUNDLE: string;
/** Whether build/companion is there and newer than every source it was made from. */
export declare function bundleIsFresh(): boolean;
/** Compiles the companion into build/companion. */
export declare function buildBundle(): Promise<void>;
