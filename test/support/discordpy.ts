import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Debian's discord.py (python3-discord) as the end-to-end tests run it (DESIGN §6: real clients,
 * unmodified): /usr/bin/python3, since another python3 may come first on PATH, and a script of
 * test/clients/ that reads a JSON job on stdin and prints one JSON report on stdout.
 */
export const PYTHON = '/usr/bin/python3';

/** Why discord.py cannot run here (the modules `imports` are missing), or undefined when it can. */
export function discordPyMissing(imports: readonly string[] = ['discord', 'aiohttp']): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', `import ${imports.join(', ')}`], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON} is not available (${probe.error.message})`;
  if (probe.status !== 0) return `${PYTHON} lacks ${imports.join(', ')} (apt-get install python3-discord python3-requests): ${probe.stderr.trim().split('\n').at(-1) ?? ''}`;
  return undefined;
}

/** Runs test/clients/`script` with `input` on stdin; resolves to its exit status and output. */
export function runClientScript(script: string, input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const path = fileURLToPath(new URL(`../clients/${script}`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [path], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // A hang-catcher only (DESIGN §6), far above what the steps take.
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
