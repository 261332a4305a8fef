import { Shape, unit } from './shape';

// Square is a Shape with four equal sides.
export class Square implements Shape {
  readonly name = 'square';
  side = unit;

  area(): number {
    return this.side * this.side;
  }

  grow(by: number): Square {
    const bigger = new Square();
    bigger.side = this.side + by;
    return bigger;
  }
}
