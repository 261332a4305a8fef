; C#. From tree-sitter-c-sharp's tags.scm (definitions only), with structs,
; records, enums, delegates, constructors, properties, fields, events,
; constants, enum members and namespaces (block and file-scoped).

(namespace_declaration name: (_) @name) @definition.module
(file_scoped_namespace_declaration name: (_) @name) @definition.module

(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(delegate_declaration name: (identifier) @name) @definition.type

(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method

(property_declaration name: (identifier) @name) @definition.field
(field_declaration
  (modifier "const")
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.constant
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(enum_member_declaration name: (identifier) @name) @definition.field

(lambda_expression) @local
(anonymous_method_expression) @local
