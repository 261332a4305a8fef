// A stand-in for scip-typescript that runs out of memory, for sciprun's
// limit tests. The project folder's name (--cwd) says how: "heap" fills
// V8's heap with objects (stopped by --max-old-space-size), "buffers"
// fills memory outside the heap (stopped by a memory cgroup only). It
// stops by itself at 4 GB, so that a limit that does not hold fails the
// test instead of the machine.
'use strict';

const path = require('path');

const cwd = process.argv[process.argv.indexOf('--cwd') + 1];
const mode = path.basename(cwd);
const held = [];
let bytes = 0;
while (bytes < 4 * 1024 * 1024 * 1024) {
  if (mode === 'heap') {
    const a = new Array(1 << 20);
    for (let i = 0; i < a.length; i++) a[i] = { i };
    held.push(a);
    bytes += 40 * a.length;
  } else {
    held.push(Buffer.alloc(16 << 20, 1));
    bytes += 16 << 20;
  }
}
console.log('allocated', bytes, 'bytes without being stopped');
