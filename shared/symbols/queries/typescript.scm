; TypeScript and TSX only. From tree-sitter-typescript's tags.scm
; (definitions only), with type aliases, enums, fields and namespaces.

(function_signature name: (identifier) @name) @definition.function
(method_signature name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(module name: (_) @name) @definition.module
(internal_module name: (_) @name) @definition.module

(public_field_definition name: (_) @name) @definition.field
(property_signature name: (_) @name) @definition.field
(enum_body name: (property_identifier) @name @definition.field)
(enum_body (enum_assignment name: (property_identifier) @name) @definition.field)
