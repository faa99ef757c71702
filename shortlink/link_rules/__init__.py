"""Link rules: ordered rules that send each visitor of a link to the right place.

Plain functions, no HTTP: the document's Structs (`schema`), its validation (`validate`),
compiling a link's rules into a matcher the visitor path runs (`matcher`), the sticky split
(`split`), the host rewrite by country (`rewrite`, with the shipped Amazon stores table in
`stores`), and the document over a connection (`service`).
"""
