/** `npm run dev`: the local API restarted on every change under functions/ or lib/ (local/dev.ts). */
import '../local/requireNode22.mjs';
import { runDev } from '../local/dev.ts';

await runDev();
