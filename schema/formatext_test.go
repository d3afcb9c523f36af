package schema

import "testing"

func TestFillRoles(t *testing.T) {
	cases := []struct{ msg, want string }{
		{"The %s schema is missing a type at path '/0' in the %s schema", "The new schema is missing a type at path '/0' in the old schema"},
		{"no roles", "no roles"},
		{"path '#/properties/100%%' in the %s schema vs %s", "path '#/properties/100%' in the new schema vs old"},
		{"trailing %", "trailing %"},
		{"%s %s %s", "new old "},
	}
	for _, c := range cases {
		if got := FillRoles(c.msg, "new", "old"); got != c.want {
			t.Errorf("FillRoles(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}
