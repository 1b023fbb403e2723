/**
 * What the emulator is told of the CDK app whose cloud assembly it runs: where the app's sources
 * are, how it is synthesized, and how its functions are bundled (to rebuild one for `--watch` or
 * `--inspect`). Everything else (stacks, functions, handlers, assets, parameters, entries) it reads
 * from the assembly. The product's entry point (scripts/startDeployed.ts) passes it.
 */
import type { BuildOptions } from 'esbuild';

export interface StageApp {
  /** The app's folder: synthesis runs there; entries and the folders below are relative to it. */
  root: string;
  /** What the assembly is made from: a file here newer than the assembly's manifest re-synthesizes. */
  assemblySources: readonly string[];
  /** The synthesis command (program and arguments), run in `root`; `--output <dir>` is added. */
  synthesize: readonly string[];
  /** The folders the functions' bundles are built from: `--watch` rebuilds the bundles of a changed file. */
  bundledSources: readonly string[];
  /** The folder of the app's own code: `--watch` re-synthesizes on its changes, grants are found in its .ts files. */
  infraSource: string;
  /** esbuild's options for a function's bundle as deployed, without entry point or output file. */
  bundleOptions(): BuildOptions;
  /** The assembly metadata type under which each function's construct records its entry (relative to `root`). */
  entryMetadata: string;
}
