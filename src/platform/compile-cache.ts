// Node's module compile cache (https://nodejs.org/api/module.html#module-compile-cache): the
// TypeScript each process strips and the V8 code it compiles are kept on disk, so a process started
// again (a restart, a scaled-out replica, the many processes the test suite starts) loads its
// modules from there: measured here, the ingress's and the workers' modules took about 2.6 s of CPU
// to load without it and 1.8–2.0 s with it. Entry points import this module first and everything
// else dynamically after it: a static import is loaded before any module body runs. The directory
// is NODE_COMPILE_CACHE, or node-compile-cache under the system's temporary directory; where it
// cannot be written the processes start as before.
import { enableCompileCache } from 'node:module';

const { directory } = enableCompileCache();
// Threads (the scan shipper, render threads) take the cache from the environment they inherit.
if (directory && !process.env.NODE_COMPILE_CACHE) process.env.NODE_COMPILE_CACHE = directory;
