import { Shape } from './shape';

// Circle is a Shape of a given radius.
export class Circle implements Shape {
  constructor(private readonly radius: number) {}

  area(): number {
    return Math.PI * this.radius * this.radius;
  }

  name(): string {
    return 'circle';
  }
}
