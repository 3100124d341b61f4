package metrics

import (
	"encoding/binary"
	"math"
)

// Sealed rows of a Series are kept packed, column by column in blocks of
// blockRows rows: a value equal to the one above it costs nothing beyond
// a shared run length, a whole number a varint, a decimal of up to nine
// places its digits and scale, anything else its eight bytes. Every value
// decodes to the same bits, so the CSV written from a packed series is
// byte for byte the one written from plain rows. A long run's rows take a
// few bytes per column instead of eight.
const blockRows = 128

// openRows is how many of the last rows stay unpacked, open to late
// additions (a 429 is counted in the interval its attempt was sent in).
const openRows = 32

// A sealed block is blockRows rows packed column after column behind a
// header: the header's length in bytes, then each column's length in
// bytes (uvarints). It is one allocation, or one stretch of a series'
// spill file.

// splitBlock returns the first n columns of a packed block, reusing into:
// reading a few columns of a wide block parses a few lengths.
func splitBlock(b []byte, n int, into [][]byte) [][]byte {
	into = into[:0]
	size, k := binary.Uvarint(b)
	head := b[k : k+int(size)]
	at := k + int(size)
	for range n {
		c, k := binary.Uvarint(head)
		head = head[k:]
		end := at + int(c)
		into = append(into, b[at:end:end])
		at = end
	}
	return into
}

// Value tags, in the low two bits of a value's first varint.
const (
	tagRun     = 0 // uvarint(n<<2|0): the value above, n more times
	tagInt     = 1 // uvarint(zigzag(v)<<2|1): a whole number
	tagDecimal = 2 // uvarint(zigzag(m)<<6|k<<2|2): m ÷ 10^k, k in 1..9
	tagRaw     = 3 // the byte 3, then the float64's bits (little endian)
)

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// maxExact is the largest whole number packed as one: beyond it a float64
// no longer holds every integer.
const maxExact = 1 << 50

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// packValue appends v's encoding.
func packValue(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < maxExact && !(v == 0 && math.Signbit(v)) {
		return binary.AppendUvarint(b, zigzag(int64(v))<<2|tagInt)
	}
	if !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e6 && v != 0 && isDecimal9(v) {
		for k := 1; k < len(pow10); k++ {
			m := math.Round(v * pow10[k])
			if math.Float64bits(m/pow10[k]) == math.Float64bits(v) && math.Abs(m) < maxExact {
				return binary.AppendUvarint(b, zigzag(int64(m))<<6|uint64(k)<<2|tagDecimal)
			}
		}
	}
	b = append(b, tagRaw)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// isDecimal9 reports whether v (finite, 0 < |v| < 10⁶) is some m ÷ 10⁹
// as a float64 divides it. A v that is m ÷ 10^k for a smaller k passes
// too: v·10⁹ is then within 0.13 of the whole m·10^(9−k), which rounds
// back to it, and dividing that by 10⁹ rounds the same real number as
// m ÷ 10^k does. So a v that fails is no decimal of up to nine places,
// found at one multiplication instead of nine (a rate or a usage
// fraction seldom is one).
func isDecimal9(v float64) bool {
	return math.Float64bits(math.Round(v*1e9)/1e9) == math.Float64bits(v)
}

// appendColumn appends the packing of one column of a block to b.
func appendColumn(b []byte, values []float64) []byte {
	prev, run := uint64(0), uint64(0) // the value above the first is +0
	for _, v := range values {
		bits := math.Float64bits(v)
		if bits == prev {
			run++
			continue
		}
		if run > 0 {
			b, run = binary.AppendUvarint(b, run<<2|tagRun), 0
		}
		b, prev = packValue(b, v), bits
	}
	if run > 0 {
		b = binary.AppendUvarint(b, run<<2|tagRun)
	}
	return b
}

// unpackColumn appends a packed column's n values to out.
func unpackColumn(b []byte, n int, out []float64) []float64 {
	prev := 0.0
	for len(b) > 0 && n > 0 {
		if b[0] == tagRaw {
			prev = math.Float64frombits(binary.LittleEndian.Uint64(b[1:9]))
			b = b[9:]
			out, n = append(out, prev), n-1
			continue
		}
		u, k := binary.Uvarint(b)
		b = b[k:]
		switch u & 3 {
		case tagRun:
			for range u >> 2 {
				out = append(out, prev)
			}
			n -= int(u >> 2)
			continue
		case tagInt:
			prev = float64(unzigzag(u >> 2))
		case tagDecimal:
			prev = float64(unzigzag(u>>6)) / pow10[(u>>2)&15]
		}
		out, n = append(out, prev), n-1
	}
	return out
}

// sealTile is how many columns seal gathers in one pass over the rows:
// a cache line of each row. Column by column, a wide series (a thousand
// hosts' columns) would reach every row's line once per column.
const sealTile = 8

// seal packs rows (blockRows of them, each of width columns) into a block.
// The columns are packed one after another into scratch (reused from one
// block to the next, and returned) and copied out behind their lengths, so
// a block is one allocation of its exact size.
func seal(rows [][]float64, width int, scratch []byte) (packed, buf []byte) {
	var tile [sealTile][blockRows]float64
	ends := make([]int, width)
	buf = scratch[:0]
	for first := 0; first < width; first += sealTile {
		n := min(sealTile, width-first)
		if n == sealTile {
			for i, row := range rows {
				cells := (*[sealTile]float64)(row[first : first+sealTile])
				tile[0][i], tile[1][i], tile[2][i], tile[3][i] = cells[0], cells[1], cells[2], cells[3]
				tile[4][i], tile[5][i], tile[6][i], tile[7][i] = cells[4], cells[5], cells[6], cells[7]
			}
		} else {
			for i, row := range rows {
				for k, v := range row[first : first+n] {
					tile[k][i] = v
				}
			}
		}
		for k := range n {
			buf = appendColumn(buf, tile[k][:len(rows)])
			ends[first+k] = len(buf)
		}
	}
	head, from := 0, 0
	for _, end := range ends {
		head += uvarintLen(uint64(end - from))
		from = end
	}
	packed = make([]byte, 0, uvarintLen(uint64(head))+head+len(buf))
	packed = binary.AppendUvarint(packed, uint64(head))
	from = 0
	for _, end := range ends {
		packed = binary.AppendUvarint(packed, uint64(end-from))
		from = end
	}
	packed = append(packed, buf...)
	return packed, buf
}

// uvarintLen is the length of v's uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
