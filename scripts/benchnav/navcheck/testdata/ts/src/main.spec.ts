// A test file: its references are left out on both sides.
import { total } from './main';
import { Square } from './square';

console.log(total([new Square()]));
