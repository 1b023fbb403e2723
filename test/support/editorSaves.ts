/** The ways editors save a file, for the watch tests: each must be seen, every time. */
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';

export const EDITOR_SAVES: Readonly<Record<string, (file: string, text: string) => void>> = {
  'in place': (file, text) => writeFileSync(file, text),
  // vim, JetBrains' safe write, sed -i: a new file renamed over the old, so the old inode is gone.
  'rename over': (file, text) => {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  },
  'delete and create': (file, text) => {
    unlinkSync(file);
    writeFileSync(file, text);
  },
};
