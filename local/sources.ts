/** The folders the functions' bundles are built from: what `npm run dev` and `start:deployed --watch` watch. */
export const BUNDLED_SOURCES = ['functions', 'lib'] as const;
