// Copies the one file of Mermaid the local viewer needs (and its license) into viewer/vendor/, so
// the package ships a 5 MB script instead of making every install pull Mermaid's 120 MB of
// dependencies. Run by `npm run build` (and so before packing).
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const target = fileURLToPath(new URL('../viewer/vendor/', import.meta.url));
const script = require.resolve('mermaid/dist/mermaid.min.js');
mkdirSync(target, { recursive: true });
copyFileSync(script, path.join(target, 'mermaid.min.js'));
copyFileSync(path.join(path.dirname(script), '..', 'LICENSE'), path.join(target, 'mermaid.LICENSE'));
