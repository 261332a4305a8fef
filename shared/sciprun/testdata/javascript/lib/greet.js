'use strict';

/**
 * Greeter says hello.
 */
class Greeter {
  constructor(greeting) {
    this.greeting = greeting;
  }

  greet(name) {
    return `${this.greeting}, ${name}!`;
  }
}

function makeGreeter() {
  return new Greeter('Hello');
}

module.exports = { Greeter, makeGreeter };
