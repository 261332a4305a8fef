// Shape is anything with an area.
export interface Shape {
  area(): number;
  readonly name: string;
}

// unit is the side of the smallest square.
export const unit = 1;
