; Python. From tree-sitter-python's tags.scm (definitions only), with
; module variables and class attributes. A module-level name in capitals
; is a constant (PEP 8), any other a variable.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

(module (expression_statement (assignment left: (identifier) @name) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
(module (expression_statement (assignment left: (identifier) @name) @definition.variable))

(class_definition
  body: (block (expression_statement (assignment left: (identifier) @name) @definition.field)))

(lambda) @local
