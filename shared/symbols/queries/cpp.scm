; C++ only (after c.scm). From tree-sitter-cpp's tags.scm, with
; namespaces, aliases, methods declared in a class and methods defined out
; of it (Shape::area, whose container is Shape).

(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(namespace_definition name: (namespace_identifier) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type

(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier scope: (_) @container name: (identifier) @name))) @definition.method

(lambda_expression) @local
