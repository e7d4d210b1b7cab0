// Another build of this repository, to measure beside today's tree in the same run
// (BENCH_BASELINE_REF): a git worktree of the ref under .stack/bench-builds/, with its own
// node_modules installed from its own package-lock.json and patches (npm's cache makes this a
// copy when nothing is new). Made once per ref and kept; a ref that names a branch is checked out
// at the commit it names now.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './lib.ts';

const git = (args: string[], cwd = ROOT) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The root of a worktree of `ref` (its commit), ready to run: its own packages installed. */
export function baselineBuild(ref: string): { root: string; commit: string } {
  const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const root = join(ROOT, '.stack', 'bench-builds', commit.slice(0, 12));
  if (!existsSync(join(root, '.git'))) {
    // A worktree left half-made by an interrupted run is pruned first.
    git(['worktree', 'prune']);
    git(['worktree', 'add', '--detach', root, commit]);
  }
  const installed = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(installed) || readFileSync(installed, 'utf8') === '') {
    console.log(`installing the packages of ${ref} (${commit.slice(0, 12)}) in ${root}…`);
    // This process's node (Node 24) and its npm, whatever the machine's PATH holds; npm's output only if it fails.
    try {
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      });
    } catch (err) {
      const { stdout, stderr } = err as { stdout?: Buffer; stderr?: Buffer };
      throw new Error(`npm install in ${root} failed:\n${stdout ?? ''}${stderr ?? ''}`);
    }
  }
  return { root: `${root}/`, commit };
}
