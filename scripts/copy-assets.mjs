// Copies the stylesheet and browser scripts (src/web/assets/) next to the compiled
// dist/src/web/assets.js, which reads them at start-up; tsc copies only what it compiles.
import { cpSync } from 'node:fs';

cpSync(new URL('../src/web/assets/', import.meta.url), new URL('../dist/src/web/assets/', import.meta.url), { recursive: true });
