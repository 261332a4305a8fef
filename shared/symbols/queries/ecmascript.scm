; JavaScript and TypeScript (both grammars have these nodes). From
; tree-sitter-javascript's tags.scm (definitions only), with constants,
; variables and local regions. See the package doc for the captures.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method

; A variable holding a function is a function (this pattern comes first,
; so it wins over the ones below).
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(lexical_declaration kind: "const" (variable_declarator name: (identifier) @name) @definition.constant)
(lexical_declaration kind: "let" (variable_declarator name: (identifier) @name) @definition.variable)
(variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)

; What functions without a name (callbacks) define is local.
(arrow_function) @local
(function_expression) @local
