; PHP. From tree-sitter-php's tags.scm (definitions only), with enums,
; constants and enum cases. Traits are interfaces.

(namespace_definition name: (namespace_name) @name) @definition.module

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.interface
(enum_declaration name: (name) @name) @definition.enum

(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method

(property_declaration (property_element name: (variable_name (name) @name))) @definition.field
(const_declaration (const_element (name) @name)) @definition.constant
(enum_case name: (name) @name) @definition.field

(anonymous_function) @local
(arrow_function) @local
