import { statSync } from 'node:fs';

/**
 * Issue #36 §4: the database, its WAL and the secret file are meant for the server's own user
 * (mode 0600; their folder 0700). For each of `paths` that exists and that the group or others
 * may read or write, a sentence saying so and how to fix it; main.ts logs them as warnings at
 * start. Missing files are skipped; on Windows modes say nothing, so nothing is reported.
 */
export function filesOpenToOthers(paths: readonly string[], platform: NodeJS.Platform = process.platform): string[] {
  if (platform === 'win32') return [];
  const advice: string[] = [];
  for (const path of paths) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) !== 0) {
      advice.push(`${path} is open to other users of this machine (mode 0${mode.toString(8)}); run "chmod 600 ${path}"`);
    }
  }
  return advice;
}
