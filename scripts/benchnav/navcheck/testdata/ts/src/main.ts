import { Square, Shape } from './index';
import { unit as one } from './shape';

// total adds the areas of shapes.
export function total(shapes: Shape[]): number {
  let sum = 0;
  for (const s of shapes) {
    sum += s.area();
  }
  return sum;
}

// A character of two UTF-16 units before a use: columns are bytes.
const label = '😀 ' + one, sq = new Square();
console.log(label, total([sq, sq.grow(one)]), sq.name);
