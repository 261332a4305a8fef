'use strict';

const { makeGreeter } = require('./lib/greet');

const g = makeGreeter();
console.log(g.greet('world'));
