/**
 * The folders the functions' bundles are built from: a change there restarts `npm run dev`'s
 * server (local/dev.ts) and rebuilds `npm run start:deployed -- --watch`'s bundles (the stage
 * emulator's watch.ts, which may import local/; local/ never imports the emulator).
 */
export const BUNDLED_SOURCES = ['functions', 'lib'] as const;
