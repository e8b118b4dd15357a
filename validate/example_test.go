package validate_test

import (
	"fmt"

	"github.com/fxhq/fx/validate"
)

func ExampleObject() {
	order := validate.Object(validate.Fields{
		"name": validate.String().MinLen(1),
		"qty":  validate.Integer().Min(1).Default(1),
		"tags": validate.Array(validate.String().Enum("gift", "urgent")).Optional(),
	}).Strict()

	body, _ := validate.DecodeJSON([]byte(`{"name":"","tags":["gift","later"],"colour":"red"}`))
	for _, is := range order.Validate(body).Issues {
		fmt.Println(is.Path, is.Message)
	}
	// Output:
	// [name] Must be at least 1 character long
	// [tags 1] Must be one of: "gift", "urgent"
	// [colour] Unknown key
}

func ExampleQuery() {
	list := validate.Query(validate.Fields{
		"limit": validate.Integer().Min(1).Max(100).Default(20),
		"tag":   validate.Array(validate.String()).Optional(),
	})
	// what fx hands a Query schema for ?limit=&tag=a&tag=b
	res := list.Validate(map[string]any{"limit": "", "tag": []string{"a", "b"}})
	fmt.Println(res.Value)
	res = list.Validate(map[string]any{"limit": "0x10"})
	fmt.Println(res.Issues[0].Path, res.Issues[0].Message)
	// Output:
	// map[limit:20 tag:[a b]]
	// [limit] Expected an integer, got "0x10"
}

func ExampleStruct() {
	type Item struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	type Order struct {
		Name  string `json:"name"`
		Items []Item `json:"items"`
	}
	s := validate.Struct[Order]()

	res := s.ValidateJSON([]byte(`{"name":"Ada","items":[{"sku":"a","qty":2}]}`))
	fmt.Println(res.Value.(*Order).Items[0].Qty)

	// every type error, not only the first
	res = s.ValidateJSON([]byte(`{"name":7,"items":[{"sku":"a","qty":"2"},{"sku":false}]}`))
	for _, is := range res.Issues {
		fmt.Println(is.Path, is.Message)
	}
	// Output:
	// 2
	// [items 0 qty] Expected an integer, got a string
	// [items 1 sku] Expected a string, got a boolean
	// [name] Expected a string, got a number
}

func ExampleParseBool() {
	for _, s := range []string{"1", "True", "f", "yes"} {
		if v, issue := validate.ParseBool(s); issue != "" {
			fmt.Println(s, "->", issue)
		} else {
			fmt.Println(s, "->", v)
		}
	}
	// Output:
	// 1 -> true
	// True -> true
	// f -> false
	// yes -> Expected true or false, got "yes"
}
