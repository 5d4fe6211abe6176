package main

import (
	"bytes"
	"cmp"
	"image"
	imgcolor "image/color"
	"image/png"
	"slices"
)

// compact re-encodes a screenshot small enough to keep in the repository: a
// paletted PNG of its 256 most used colors (the theme's colors, and the most
// common shades of the glyphs' anti-aliased edges), every other color drawn
// as the nearest of them, at the best compression. The same picture always
// gives the same bytes.
func compact(img image.Image) ([]byte, error) {
	b := img.Bounds()
	count := map[imgcolor.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			count[imgcolor.RGBAModel.Convert(img.At(x, y)).(imgcolor.RGBA)]++
		}
	}
	colors := make([]imgcolor.RGBA, 0, len(count))
	for c := range count {
		colors = append(colors, c)
	}
	slices.SortFunc(colors, func(a, b imgcolor.RGBA) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A),
			uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A))
	})
	pal := make(imgcolor.Palette, 0, 256)
	for _, c := range colors[:min(256, len(colors))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	index := map[imgcolor.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := imgcolor.RGBAModel.Convert(img.At(x, y)).(imgcolor.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
