// Command agent runs one OpenAI Chat turn through capstan from Go: three
// typed tools, a recorded model response asking for four calls (one with bad
// arguments), and the tool messages to append to the conversation.
//
//	make lib && cd examples/go/agent && go run -tags capstan_intree .
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"os"
	"strings"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

type WeatherIn struct {
	City string `json:"city" jsonschema:"description=City name, e.g. Lyon,minLength=1"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit,description=Default celsius"`
}

type Weather struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Unit        string  `json:"unit"`
}

type ConvertIn struct {
	Amount float64 `json:"amount" jsonschema:"exclusiveMinimum=0"`
	From   string  `json:"from" jsonschema:"pattern=^[A-Z]{3}$"`
	To     string  `json:"to" jsonschema:"pattern=^[A-Z]{3}$"`
}

type SearchIn struct {
	Query string `json:"query" jsonschema:"minLength=2"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=5"`
}

var rates = map[string]float64{"EUR": 1, "USD": 1.08, "JPY": 162.5}

func weather(ctx context.Context, in WeatherIn) (Weather, error) {
	t := 21.5
	unit := "celsius"
	if in.Unit == "fahrenheit" {
		t, unit = t*9/5+32, in.Unit
	}
	return Weather{City: in.City, Temperature: t, Unit: unit}, nil
}

func convert(ctx context.Context, in ConvertIn) (string, error) {
	from, ok1 := rates[in.From]
	to, ok2 := rates[in.To]
	if !ok1 || !ok2 {
		return "", fmt.Errorf("unknown currency: known are EUR, USD, JPY")
	}
	return fmt.Sprintf("%.2f %s", math.Round(in.Amount/from*to*100)/100, in.To), nil
}

func search(ctx context.Context, in SearchIn) ([]string, error) {
	select { // a tool that honours cancellation and timeouts
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []string{"capstan.Register: add a tool", "capstan.Func: a typed tool"}, nil
}

// What the model answered to "Weather in Lyon, 100 EUR in USD, and find the docs".
const response = `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,
 "finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[
  {"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}},
  {"id":"call_c","type":"function","function":{"name":"convert_currency","arguments":"{\"amount\":100,\"from\":\"EUR\",\"to\":\"USD\"}"}},
  {"id":"call_s","type":"function","function":{"name":"search_docs","arguments":"{\"query\":\"register\",\"limit\":2}"}},
  {"id":"call_x","type":"function","function":{"name":"convert_currency","arguments":"{\"amount\":-3,\"from\":\"euro\"}"}}]}}]}`

func main() {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()

	search := capstan.Func("search_docs", "Search the capstan docs.", search)
	search.Timeout = 2 * time.Second
	for _, t := range []capstan.Tool{
		capstan.Func("get_weather", "Current weather in a city.", weather),
		capstan.Func("convert_currency", "Convert an amount between currencies.", convert),
		search,
	} {
		if err := reg.Register(t); err != nil {
			log.Fatal(err)
		}
	}

	tools, err := reg.Tools(capstan.FormatOpenAIChat)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tools for the request: %d bytes\n", len(tools))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	messages, err := reg.RunTurn(ctx, capstan.FormatOpenAIChat, []byte(response))
	if err != nil {
		log.Fatal(err)
	}
	var msgs []struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	if err := json.Unmarshal(messages, &msgs); err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Printf("%s %s: %s\n", m.Role, m.ToolCallID, m.Content)
	}

	// The example checks itself, so that `make go-test` catches a regression.
	ok := len(msgs) == 4 &&
		strings.Contains(msgs[0].Content, `"temperature":21.5`) &&
		msgs[1].Content == "108.00 USD" &&
		strings.Contains(msgs[2].Content, "capstan.Func") &&
		strings.Contains(msgs[3].Content, "amount") && strings.Contains(msgs[3].Content, "from")
	if !ok {
		fmt.Fprintln(os.Stderr, "unexpected messages:", string(messages))
		os.Exit(1)
	}
}
