/** `npm run dev`: the local API restarted on every change under functions/ or lib/ (local/dev.ts). */
import '../local/requireNode22.ts';
import { runDev } from '../local/dev.ts';

await runDev();
