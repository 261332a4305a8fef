; JavaScript only (TypeScript's fields are public_field_definition).

(field_definition property: (_) @name) @definition.field
