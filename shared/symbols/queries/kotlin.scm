; Kotlin. tree-sitter-kotlin (tree-sitter-grammars) ships no tags.scm: these
; are ours. Interfaces, enum classes, classes and objects; functions (in a
; class, methods); properties (const ones constants; in a class or object,
; fields); enum entries; type aliases.

(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration name: (identifier) @name (enum_class_body)) @definition.enum
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(type_alias type: (identifier) @name) @definition.type

(function_declaration name: (identifier) @name) @definition.function

(property_declaration
  (modifiers (property_modifier "const"))
  (variable_declaration (identifier) @name)) @definition.constant
(class_body (property_declaration (variable_declaration (identifier) @name)) @definition.field)
(enum_class_body (property_declaration (variable_declaration (identifier) @name)) @definition.field)
(property_declaration (variable_declaration (identifier) @name)) @definition.variable
(enum_entry (identifier) @name) @definition.field

(lambda_literal) @local
(anonymous_function) @local
