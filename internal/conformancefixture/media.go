package conformancefixture

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// The image and audio fixtures are real, decodable files (a 1x1 red PNG, a
// 10 ms silent 8 kHz mono WAV) built at start-up rather than pasted base64,
// so a client or gateway that inspects or re-encodes media sees valid data.
var (
	redPixelPNG = base64.StdEncoding.EncodeToString(encodeRedPixelPNG())
	silentWAV   = base64.StdEncoding.EncodeToString(encodeSilentWAV(8000, 80))
)

func encodeRedPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic("conformancefixture: encoding a 1x1 PNG cannot fail: " + err.Error())
	}
	return buf.Bytes()
}

// encodeSilentWAV returns a 16-bit PCM mono RIFF/WAVE file of n silent samples.
func encodeSilentWAV(sampleRate, n int) []byte {
	const bitsPerSample, channels = 16, 1
	dataLen := n * channels * bitsPerSample / 8
	var buf bytes.Buffer
	w := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	buf.WriteString("RIFF")
	w(uint32(36 + dataLen))
	buf.WriteString("WAVEfmt ")
	w(uint32(16))                                        // fmt chunk size
	w(uint16(1))                                         // PCM
	w(uint16(channels))                                  // channels
	w(uint32(sampleRate))                                // sample rate
	w(uint32(sampleRate * channels * bitsPerSample / 8)) // byte rate
	w(uint16(channels * bitsPerSample / 8))              // block align
	w(uint16(bitsPerSample))                             // bits per sample
	buf.WriteString("data")
	w(uint32(dataLen))
	buf.Write(make([]byte, dataLen))
	return buf.Bytes()
}
